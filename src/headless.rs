//! One sweep of the grid, printed as a table.
