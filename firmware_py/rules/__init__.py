"""The pure rules engine of Patchwork and Patchwork Express.

Standard library only: no I/O, clock or threads; randomness only from a seed.

>>> from firmware_py.rules import new_game, legal_actions, apply, tally
>>> state = new_game("patchwork", seed=1)
>>> state, events = apply(state, legal_actions(state)[0])   # action A
"""
from .actions import (ADVANCE, DISCARD, Action, Advance, BluePatchesJoined, Buy, ButtonsEarned,
                      ClaimSpecialTile, DiscardLeather, Event, GameEnded, IncomePaid,
                      LeatherDiscarded, LeatherPlaced, LeatherWon, PatchBought, PlaceLeather,
                      SpecialTileAwarded, TokenMoved)
from .adjust import Adjust, ButtonsAdjusted, adjust_buttons
from .catalogue import GameSpec, Patch, load_spec
from .engine import apply, legal_actions, placement_masks, score, settle_leather, winner_of
from .errors import *  # noqa: F401,F403  (the error classes are part of the API)
from .record import (GameRecord, RecordError, action_to_move, dumps_record, move_to_action,
                     parse_record, replay, start_state, steps, untracked_copy)
from .state import GameState, PlayerState, deal, new_game
from .tally import PlayerTally, Tally, tally

__all__ = [name for name in dir() if not name.startswith("_")]
