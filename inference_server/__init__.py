"""The batching inference server: one ROUTER that gathers the workers' leaf positions, runs
them through the network (network/) in batches and answers over the wire (wire/).

Modules, in dependency order:
  counters         the server's statistics (batches, positions, waits)
  binding          binding the ROUTER; an endpoint a live server holds is refused
  uploads          checkpoints sent in chunks before a reload names them
  slots            model slots and the hot-reload thread
  pipeline         the optional forward thread (server.overlap)
  queues           the eval requests waiting, one queue per slot: limits, deadlines, batches
  server           the ROUTER loop: batching, reloads, stats
  startup          start_server: the config's checks, then the server
"""
