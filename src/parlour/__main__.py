"""``python -m parlour``: the same entry point as the ``parlour`` console script."""

from parlour.cli import main

raise SystemExit(main())
