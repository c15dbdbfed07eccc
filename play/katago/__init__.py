"""KataGo as an opponent (`katago:VISITS`): where its program and network are found (locate),
the GTP config the project writes for it (config), fetching both on request (fetch), and the
match side that runs it (side)."""
