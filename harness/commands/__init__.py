"""What each of ol's commands does, between its parsed arguments and its outcome.

ol.py parses, reads the settings, makes the engine and dispatches here. A handler takes
(args, engine, chapter) and returns whether what its command checks holds, which ol.py
turns into an exit code; every error a user can cause is an OlError. A handler may grade
(``grade/``) and say it (``report/``): it is the one place that does both.

- ``student``: start, tests, tdd, check, diff: a student's own workspace;
- ``staff``: mutants, audit, grade: the course's material and a class;
- ``platforms``: prairielearn, gradescope and the Gradescope bundle;
- ``settings``: what a command is told besides its inputs;
- ``faults``: what ol says of a fault of its own.
"""
