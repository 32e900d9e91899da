# expected hint: HALF_WAY_ROUND
def area(w, h):
    if w < 0 or h < 0:
        raise ValueError("negative side")
    return w * h


def perimeter(w, h):
    return w + h
