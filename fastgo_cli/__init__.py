"""The one `fastgo` command: one thin module per command that parses its options and hands
over (a role's body to roles/, a match to play.arena), and the benches."""
