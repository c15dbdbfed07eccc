"""Every head of a network in this process, for analysis (KataGo's analysis engine and
`kata-analyze`): policy, value, and the ownership and score heads that serving leaves out.

    heads = HeadsEvaluator(model_or_checkpoint_path, device="cpu")
    logits, values, ownership, score, lead = heads(planes)
        planes    uint8 [B, P, N, N]
        logits    float32 [B, N*N + 1], pass last
        values    float32 [B] in [-1, 1], the side to move's view
        ownership float32 [B, N*N] in [-1, 1], +1 = the side to move's point (None: no head)
        score     float32 [B], the side to move's final margin in points at the komi the
                  network learnt, its mean (None: no head)
        lead      float32 [B], the same margin's median, KataGo's scoreLead (None: no
                  model.lead_head)

It runs `forward_train` in inference mode (the served backends compute policy and value only),
in chunks of at most `max_batch` rows. The heads function of play.heads_cache.HeadsCache.
"""
from __future__ import annotations

import numpy as np
import torch

from fastgo.variants import Device


class HeadsEvaluator:
    def __init__(self, model, *, device=Device.CPU, max_batch=256):
        version = 0
        if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
            from network.checkpoint import load_checkpoint
            checkpoint = load_checkpoint(model)
            model, version = checkpoint.model, checkpoint.step
        self.device = torch.device(Device.CUDA if device == Device.AUTO and torch.cuda.is_available()
                                   else (Device.CPU if device == Device.AUTO else device))
        self.net = model.eval().to(self.device)
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.config = model.config
        self.board_size = model.config.board_size
        self.model_version = version
        self.max_batch = int(max_batch)
        self.has_ownership = bool(model.config.ownership_head)
        self.has_score = bool(model.config.score_head)
        self.has_lead = bool(model.config.score_head and model.config.lead_head)

    def __call__(self, planes):
        planes = np.ascontiguousarray(planes, dtype=np.uint8)
        n = self.board_size
        if planes.ndim != 4 or planes.shape[1:] != (self.config.planes, n, n):
            raise ValueError(f"planes must be uint8 [B, {self.config.planes}, {n}, {n}], "
                             f"got {planes.dtype} {planes.shape}")
        if planes.shape[0] == 0:
            return self._run(planes)
        parts = [self._run(planes[i:i + self.max_batch])
                 for i in range(0, planes.shape[0], self.max_batch)]
        logits = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        ownership = None if parts[0][2] is None else np.concatenate([p[2] for p in parts])
        score = None if parts[0][3] is None else np.concatenate([p[3] for p in parts])
        lead = None if parts[0][4] is None else np.concatenate([p[4] for p in parts])
        return logits, values, ownership, score, lead

    def _run(self, planes):
        with torch.inference_mode():
            x = torch.from_numpy(planes).to(self.device).float()
            out = self.net.forward_train(x)

            def host(t):
                return None if t is None else t.float().cpu().numpy().astype(np.float32, copy=False)

            return (host(out.logits), host(out.value), host(out.ownership), host(out.score),
                    host(out.lead))
