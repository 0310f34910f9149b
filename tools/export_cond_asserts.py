"""export_cond_asserts.py OUT.pt2 - export, with real torch (2.14), a model whose runtime
asserts sit inside control-flow subgraphs, and save it as a .pt2 fixture for shapegate's
graph tests (tests/data/graph/, docs/graph.md).

The model: `torch.cond(x.shape[0] > 4, true_fn, false_fn, (x, t))` over a dynamic dim
n = x.shape[0] in [2, 64]; true_fn reads `t.item()` and checks it with torch._check
(n_item >= 2, n_item <= x.shape[0]); false_fn checks `x.shape[0] % 2 == 0`. Exported with
prefer_deferred_runtime_asserts_over_guards=True so that the check on the backed size is a
runtime assert (in the top-level graph and in both branches) rather than a guard. The script
prints the graph and the range constraints, saves the archive, reloads it and runs it on an
example input of each branch.

Run inside the reference chroot: /work/shared/refenv/run.sh /root/refenv/forky python3
tools/export_cond_asserts.py tests/data/graph/cond_check.pt2
"""
import sys

import torch
from torch.export import Dim


class CondCheck(torch.nn.Module):
    def forward(self, x, t):
        def true_fn(x, t):
            n = t.item()
            torch._check(n >= 2)
            torch._check(n <= x.shape[0])
            return x * n

        def false_fn(x, t):
            torch._check(x.shape[0] % 2 == 0)
            return x + 1

        return torch.cond(x.shape[0] > 4, true_fn, false_fn, (x, t))


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    x, t = torch.randn(6, 3), torch.tensor(3)
    ep = torch.export.export(CondCheck(), (x, t), dynamic_shapes={"x": {0: Dim("n", min=2, max=64)}, "t": None},
                             prefer_deferred_runtime_asserts_over_guards=True)
    print("torch", torch.__version__)
    print(ep.graph_module.print_readable(print_output=False))
    print("range_constraints", ep.range_constraints)
    torch.export.save(ep, out)
    back = torch.export.load(out)
    for xs in (torch.randn(6, 3), torch.randn(4, 3)):
        got = back.module()(xs, t)
        want = CondCheck()(xs, t)
        print("run", tuple(xs.shape), "ok" if torch.allclose(got, want) else "MISMATCH")
    try:
        back.module()(torch.randn(3, 3), t)
        print("run (3, 3): no error")
    except Exception as e:  # the odd size fails the runtime assert
        print("run (3, 3):", type(e).__name__, str(e).splitlines()[0][:120])


if __name__ == "__main__":
    main()
