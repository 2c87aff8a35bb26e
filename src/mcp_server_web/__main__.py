import sys

from mcp_server_web.cli import main

sys.exit(main())
