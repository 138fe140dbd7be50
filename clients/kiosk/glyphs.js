// Which characters of a label this browser can draw. A bare kiosk image often has no CJK
// or emoji font, and the browser then draws each such character as an empty box: the
// issue's "緊急" showed as two boxes. Those characters are left out of what is shown
// (the accessible name keeps the whole label); a label with nothing left shows its
// button id. Exposes window.KioskGlyphs.
"use strict";

window.KioskGlyphs = (() => {
  const SIZE = 40;
  let ctx;                    // undefined: not tried yet; null: no canvas (assume drawable)
  const known = new Map();    // font + character -> drawable?
  const boxes = new Map();    // font -> the look of a character it has no glyph for

  function context() {
    if (ctx === undefined) {
      const canvas = document.createElement("canvas");
      canvas.width = SIZE * 2;
      canvas.height = SIZE * 2;
      ctx = canvas.getContext("2d", { willReadFrequently: true }) || null;
    }
    return ctx;
  }

  /** Width and a hash of the pixels `ch` draws as, in `font`. */
  function look(c, ch, font) {
    c.clearRect(0, 0, SIZE * 2, SIZE * 2);
    c.font = font;
    c.textBaseline = "top";
    c.fillStyle = "#000";
    c.fillText(ch, 4, 4);
    const data = c.getImageData(0, 0, SIZE * 2, SIZE * 2).data;
    let hash = 0;
    for (let i = 3; i < data.length; i += 4) hash = (hash * 31 + data[i]) | 0;
    return `${c.measureText(ch).width}:${hash}`;
  }

  function canDraw(ch, font) {
    if (/\s/.test(ch) || ch.codePointAt(0) < 0x80) return true;
    const c = context();
    if (!c) return true;
    const key = `${font}\u0000${ch}`;
    if (!known.has(key)) {
      // U+FFFF is a noncharacter: no font has a glyph for it, so it draws as the box.
      if (!boxes.has(font)) boxes.set(font, look(c, "\uFFFF", font));
      known.set(key, look(c, ch, font) !== boxes.get(font));
    }
    return known.get(key);
  }

  /** `text` without the characters `font` would draw as boxes, spaces tidied. */
  function visible(text, font) {
    return [...text].filter((ch) => canDraw(ch, font)).join("").replace(/\s+/g, " ").trim();
  }

  return { canDraw, visible };
})();
