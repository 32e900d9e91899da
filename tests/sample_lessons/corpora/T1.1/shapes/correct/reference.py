def area(w, h):
    if w < 0 or h < 0:
        raise ValueError(f"A rectangle's sides cannot be negative: {w} and {h}.")
    return w * h


def perimeter(w, h):
    return 2 * (w + h)
