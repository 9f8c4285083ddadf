"""Where the episode page draws a step's pointer actions."""

from __future__ import annotations

from deskscore.viewer.marks import Mark, screen_size, step_marks


def test_a_click_is_a_point_where_it_clicked() -> None:
    assert step_marks([{"kind": "click", "x": 10.0, "y": 20.0}]) == [Mark("click", 10.0, 20.0)]


def test_a_drag_is_a_line_from_where_the_pointer_was_to_where_it_ends() -> None:
    actions = [
        {"kind": "move", "x": 5.0, "y": 6.0},
        {"kind": "drag", "x": 50.0, "y": 60.0},
        {"kind": "drag", "x": 70.0, "y": 80.0},
    ]
    assert step_marks(actions) == [
        Mark("drag", 50.0, 60.0, 5.0, 6.0),
        Mark("drag", 70.0, 80.0, 50.0, 60.0),
    ]


def test_a_drag_without_a_known_start_is_its_end_point_only() -> None:
    assert step_marks([{"kind": "drag", "x": 1.0, "y": 2.0}]) == [Mark("drag", 1.0, 2.0)]


def test_calls_without_coordinates_draw_nothing_and_a_move_before_a_click_is_not_drawn() -> None:
    actions = [
        {"kind": "type", "x": None, "y": None},
        {"kind": "move", "x": 3.0, "y": 4.0},
        {"kind": "double_click", "x": 3.0, "y": 4.0},
    ]
    assert step_marks(actions) == [Mark("double_click", 3.0, 4.0)]
    assert step_marks([{"kind": "move", "x": 3.0, "y": 4.0}]) == [Mark("move", 3.0, 4.0)]


def test_a_step_without_parsed_calls_uses_its_own_kind_and_coordinates() -> None:
    assert step_marks(None, "right_click", 7.0, 8.0) == [Mark("right_click", 7.0, 8.0)]
    assert step_marks([], "type", 7.0, 8.0) == []
    assert step_marks(None, "click", None, None) == []


def test_the_coordinate_space_is_the_screen_else_the_screenshot() -> None:
    assert screen_size(1920, 1080, 64, 36) == (1920, 1080)
    assert screen_size(None, None, 64, 36) == (64, 36)
    assert screen_size(0, 0, None, None) is None
