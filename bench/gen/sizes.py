"""Example sizes of the sweep model (bench/gen/models.py `_Mixed`), without torch, so that
bench/gen/tile.py can run outside the reference chroot."""


def mixed_sizes(n):
    """Input i is in group g = i // 4: an anchor, one equal to it, one longer by the slice
    offset 1 + g % 8, one viewed as (-1, 8)."""
    sizes = []
    for i in range(n):
        g, r = divmod(i, 4)
        anchor = 16 + 8 * (g % 32)
        sizes.append([anchor, anchor, anchor + 1 + g % 8, 8 * (3 + g % 100)][r])
    return sizes
