"""A registered dataclass as input, with a keyword mask; features and labels got separate Dims
although the model adds them. No corpus case."""
import dataclasses

import torch
from torch.export import Dim


@dataclasses.dataclass
class Batch:
    features: torch.Tensor
    labels: torch.Tensor


torch.export.register_dataclass(Batch)


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 1)

    def forward(self, batch, *, mask):
        score = self.proj(batch.features).squeeze(-1)
        return (score + batch.labels) * mask


batch = Batch(torch.randn(5, 6), torch.randn(5))
spec = {"batch": [{0: Dim("n_feat", max=512)}, {0: Dim("n_lab", max=512)}], "mask": {0: Dim("n_mask", max=512)}}
ep = torch.export.export(Scorer(), (batch,), {"mask": torch.ones(5)}, dynamic_shapes=spec)
print(ep.range_constraints)
