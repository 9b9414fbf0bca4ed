"""The LAN web page: a separate process (``patchwork-companion web``) that reads the game
service's live feed and the store of finished games; see :mod:`.server`."""
