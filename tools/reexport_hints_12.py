import torch
from torch.export import Dim, export
class Ge(torch.nn.Module):
    def __init__(s, n): super().__init__(); s.n = n
    def forward(s, x):
        torch._check(x.shape[0] >= s.n); return x * 2
class Le(torch.nn.Module):
    def __init__(s, n): super().__init__(); s.n = n
    def forward(s, x):
        torch._check(x.shape[0] <= s.n); return x + 1
class Two(torch.nn.Module):
    def forward(s, x):
        torch._check(x.shape[1] >= 40); torch._check(x.shape[0] <= 16); return x.sum(1)
cases = [
 ("hint_auto_max_only_conflict", Ge(8), (12, 2), {'x': {0: Dim.AUTO(min=8)}}),
 ("hint_auto_range_conflict", Ge(16), (20, 3), {'x': {0: Dim.AUTO(min=16)}}),
 ("hint_auto_two_dims_conflict", Two(), (4, 48), {'x': {0: Dim.AUTO(min=2, max=8), 1: Dim.AUTO(min=40)}}),
 ("hint_dynamic_range_conflict", Ge(16), (20, 3), {'x': {0: Dim.DYNAMIC(min=16)}}),
 ("hint_dynamic_upper_conflict", Le(16), (8, 3), {'x': {0: Dim.DYNAMIC(max=16)}}),
]
for name, m, shape, spec in cases:
    try:
        ep = export(m, (torch.randn(*shape),), dynamic_shapes=spec)
        print(name, "ok", {str(k): (str(v.lower), str(v.upper)) for k, v in ep.range_constraints.items()})
    except Exception as e:
        print(name, "FAIL", type(e).__name__, str(e).splitlines()[0][:200])
