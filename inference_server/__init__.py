"""The policy/value network, the ZeroMQ batching server, its client, the wire protocol and
checkpoint loading."""
