"""A frame fuzzer for every listener of a real server.

``python -m tests.fuzz`` (``make fuzz``) sends 100,000 hostile frames per protocol; the test in
``test_fuzz.py`` sends a seeded 2,000. See docs/development.md, "Fuzzing".
"""
