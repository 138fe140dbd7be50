// Lays a panel's button groups out to fill the space they are given, at any size and
// orientation, with 1 to a dozen or more buttons. Exposes window.KioskLayout.
//
// The groups keep their order and are packed onto shelves (rows) of at most C buttons
// side by side; a group wider than C wraps onto more rows of its own. Every C from 1 to
// the number of buttons is tried and the one whose smallest button is largest (in its
// shorter side) wins, so a phone gets 2 columns where a desktop gets 3 to 5. Sizes are
// set on the existing nodes (nothing moves in the DOM), so a resize keeps focus.
"use strict";

window.KioskLayout = (() => {
  const HEADING = 22;   // a group's name above its buttons, px
  const MIN_ROW = 64;   // below this the panel scrolls rather than shrink buttons further
  // A shelf with a hold button gets taller rows: it stacks its label, ring, owner and
  // last-fired line, and the ring should stay big enough to read at a glance.
  const HOLD_WEIGHT = 1.25;

  /**
   * Shelves for `counts` (buttons per group) with at most `columns` per shelf; `weights`
   * (per group) make a shelf's rows taller.
   */
  function shelves(counts, columns, weights) {
    const out = [];
    let open = null;
    counts.forEach((n, index) => {
      const weight = weights ? weights[index] : 1;
      if (n >= columns) {
        out.push({ groups: [index], width: n, rows: Math.ceil(n / columns), weight });
        open = null;
        return;
      }
      if (!open || open.width + n > columns) {
        open = { groups: [], width: 0, rows: 1, weight: 1 };
        out.push(open);
      }
      open.groups.push(index);
      open.width += n;
      open.weight = Math.max(open.weight, weight);
    });
    return out;
  }

  /** The plan for `columns`: shelves, the row height, and its score (px). */
  function plan(counts, weights, columns, width, height, gap) {
    const list = shelves(counts, columns, weights);
    const rows = list.reduce((sum, shelf) => sum + shelf.rows, 0);
    const weighted = list.reduce((sum, shelf) => sum + shelf.rows * shelf.weight, 0);
    const free = height - list.length * HEADING - (list.length - 1) * gap - (rows - list.length) * gap;
    const rowHeight = free / weighted;  // of a shelf of weight 1
    let narrowest = Infinity;
    let lowest = Infinity;
    for (const shelf of list) {
      lowest = Math.min(lowest, rowHeight * (shelf.weight > 1 ? 1 : shelf.weight));
      const usable = width - (shelf.groups.length - 1) * gap;
      for (const index of shelf.groups) {
        const n = counts[index];
        const cols = Math.min(n, columns);
        const groupWidth = shelf.groups.length === 1 ? width : usable * n / shelf.width;
        narrowest = Math.min(narrowest, (groupWidth - (cols - 1) * gap) / cols);
      }
    }
    return { columns, list, rows, rowHeight, score: Math.min(narrowest, lowest) };
  }

  function best(counts, weights, width, height, gap) {
    const total = counts.reduce((a, b) => a + b, 0);
    let chosen = null;
    for (let columns = 1; columns <= Math.max(1, total); columns += 1) {
      const candidate = plan(counts, weights, columns, width, height, gap);
      if (!chosen || candidate.score > chosen.score + 0.5) chosen = candidate;
    }
    return chosen;
  }

  /**
   * Sizes `groups` ([{ section, grid, buttons: [elements] }]) inside `container`. Widths
   * are fractions of the shelf, heights pixels of the container's current height. A
   * group with a hold button (data-kind="hold") weighs HOLD_WEIGHT.
   */
  function arrange(container, groups) {
    if (!groups.length) return null;
    const style = getComputedStyle(container);
    const gap = parseFloat(style.rowGap) || 0;
    const width = container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const height = container.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const counts = groups.map((g) => g.buttons.length);
    const weights = groups.map((g) => (g.buttons.some((el) => el.dataset.kind === "hold") ? HOLD_WEIGHT : 1));
    const chosen = best(counts, weights, width, height, gap);
    for (const shelf of chosen.list) {
      const rowHeight = Math.max(MIN_ROW, chosen.rowHeight * shelf.weight);
      const parts = shelf.groups.length;
      for (const index of shelf.groups) {
        const { section, grid, buttons } = groups[index];
        const n = buttons.length;
        const cols = Math.min(n, chosen.columns);
        const rows = Math.ceil(n / cols);
        // The groups of a shelf add up to its full width (less the gaps), so the flex
        // line breaks exactly after them; a hair less, so rounding never wraps early.
        section.style.flex = parts === 1 ? "1 1 100%"
          : `1 1 calc((100% - ${(parts - 1) * gap}px) * ${n / shelf.width} - 0.5px)`;
        section.style.height = `${HEADING + rows * rowHeight + (rows - 1) * gap}px`;
        grid.style.gridTemplateColumns = `repeat(${cols}, minmax(0, 1fr))`;
        grid.style.gridTemplateRows = `repeat(${rows}, minmax(0, 1fr))`;
        // A short last row: its last button takes the rest of the row, leaving no hole.
        buttons.forEach((el) => { el.style.gridColumn = ""; });
        const short = n % cols;
        if (short) buttons[n - 1].style.gridColumn = `span ${cols - short + 1}`;
      }
    }
    container.dataset.columns = String(chosen.columns);
    return chosen;
  }

  return { arrange, shelves, best };
})();
