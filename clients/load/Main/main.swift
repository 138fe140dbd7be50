// arbiter-load: filled in by the following commits.
print("arbiter-load: not yet implemented")
