"""The simulated world: command routing, SWT and SWR (see docs/world.md)."""
