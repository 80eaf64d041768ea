"""The transport: how a front end reaches the library. ``entry.call`` picks the per-user
service (``client`` ↔ ``service``, which keeps the models and recall indexes loaded through
``resources``) or this process (``local``) once; ``mcp_server`` serves the same verbs to other
assistants over MCP. May import the library and everything under it; the thin client
(``client``, ``entry``) imports no heavy module."""
