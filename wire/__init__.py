"""The wire between processes: what a worker, the inference server and the game recorder say
to each other, and how they authenticate. No module here imports torch.

Modules:
  protocol         msgpack headers + raw buffers, versioned, size-checked (numpy, msgpack)
  client           InferenceClient: a DEALER, batches in flight, Lazy Pirate retries (zmq)
  keys             CURVE key files, allow lists and the ZAP authenticator (ironhouse) (zmq)
"""
