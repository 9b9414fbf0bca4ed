"""The box's quilt picture: old squares grey, the new patch solid, leather hollow."""
from PIL import Image, ImageDraw

from firmware_py.view.quilt_art import draw_quilt, quilt_cell


def lit(image, x0, y0, size):
    return sum(image.getpixel((x, y)) > 0 for x in range(x0, x0 + size) for y in range(y0, y0 + size))


def test_quilt_picture_shows_each_kind_of_square():
    image = Image.new("1", (128, 64))
    draw = ImageDraw.Draw(image)
    before, patch, leather = 1 << 0, (1 << 1) | (1 << 10), 1 << 80
    box = draw_quilt(draw, (60, 0, 64, 64), 9, 9, before, patch, leather)
    cell = quilt_cell(9, 9, 64, 64)
    assert cell == 5 and box == (60, 0, 9 * 6 + 3, 9 * 6 + 3)
    pitch = cell + 1

    def at(r, c):
        return lit(image, 62 + c * pitch, 2 + r * pitch, cell)
    assert at(0, 1) == at(1, 1) == cell * cell                 # the new patch: solid
    assert 0 < at(0, 0) < cell * cell and at(0, 0) != 1         # covered before: checkerboard
    assert at(8, 8) == cell * cell - (cell - 2) ** 2            # leather: hollow
    assert at(4, 4) == 1                                        # empty: one dot
    assert image.getpixel((59, 0)) == 0 and image.getpixel((60, 0)) > 0   # frame starts at box
