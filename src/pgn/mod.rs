//! PGN game records: reading into game trees, writing them back.
