"""The policy/value network, the ZeroMQ batching server, its client, the wire protocol and
checkpoint loading.

Modules, in dependency order (workers import only the first three; they never import torch):
  protocol   the wire: msgpack headers + raw buffers, versioned, size-checked (numpy, msgpack)
  evaluator  the evaluator interface; uniform/random/in-process evaluators (torch only lazily)
  client     InferenceClient: DEALER, two batches in flight, Lazy Pirate retries (zmq)
  curve      CURVE key files, allow lists and the ZAP authenticator (ironhouse) (zmq)
  experience the shard schema: GameRecord, ShardWriter, read_shard, check_record, quarantine
  model      PolicyValueNet (bBLOCKScCHANNELS residual tower), build_model (torch)
  checkpoint atomic save, verified weights_only load, content hash
  runner     ModelRunner: one network on one device (CPU channels_last / CUDA pinned, autocast,
             graphs), plus canary positions
  slots      model slots and the hot-reload thread
  pipeline   the optional forward thread (server.overlap)
  server     the ROUTER loop, batching, stats, `fastgo serve`
  recorder   games from workers on other hosts into shards, acknowledged, deduplicated
  loadgen    load-generating client process for `fastgo bench server`
  testing    a server subprocess for tests and benches
"""
