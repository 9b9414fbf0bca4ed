"""Club mode: many boxes publish their tables to one MQTT broker (Mosquitto),
and one scoreboard shows them all.

- :mod:`.topics`: topic names and payloads, and the hostile-input parsers;
- :mod:`.progress`: a game as it stands -> the club's state and events (pure);
- :mod:`.outbox`: the box's on-disk queue of events not yet acknowledged;
- :mod:`.bridge`: the box's MQTT client (paho-mqtt 2.x);
- :mod:`.board`: the scoreboard's model (pure); :mod:`.serve`: its page;
- :mod:`.simboxes`: simulated boxes for trying a broker.

The game service never imports this package: it runs in the networked process.
"""
