# expected hint: PERIMETER_FOR_AREA
def area(w, h):
    if w < 0 or h < 0:
        raise ValueError("negative side")
    return 2 * (w + h)


def perimeter(w, h):
    return 2 * (w + h)
