"""The game recorder: self-play workers on other hosts send their finished games to one
recorder beside the trainer, which writes the same shards a local worker would. Its three
parts, one per end of the socket (the role's body is roles/recorder.py, as every role's is):
  messages         the `game` and `recorded` messages, in the wire's framing (wire.protocol)
  sink             the worker's end: a DEALER, every game kept until the recorder confirms it
  server           the recorder's end: a ROUTER that checks each game and writes shards
"""
