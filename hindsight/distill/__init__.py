"""The distillation stage: a privileged teacher's candidates, their replay, the selection."""


def run_distillation(argv: list[str]) -> None:
    """Teacher, replay and selection in this process, as their commands run them on `argv`
    (a recipe and its --set overrides); raises on the first step that fails."""
    from hindsight.distill.replay import main as replay_main
    from hindsight.distill.select import main as select_main
    from hindsight.distill.teacher import main as teacher_main

    for step in (teacher_main, replay_main, select_main):
        code = step(list(argv))
        if code != 0:
            raise RuntimeError(f"{step.__module__} exited {code} on {' '.join(argv)}")
