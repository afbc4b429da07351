// Keeps the seat's view current between welcomes by applying each live event to it.
// It copies what events say, and works out only what protocol.md fixes for every seat: the
// channel the server will post its chat lines to. A card's facts come as their roles declare
// (facts.js).
import { forgetFacts, tellFact } from "./facts.js";

// A prompt, told apart from the same action's prompt of another phase.
export function promptKey(p) {
  return `${p.action}:${p.deadline}`;
}

function seatOf(view, seat) {
  return (view.seats || []).find((s) => s.seat === seat);
}

function dropPrompt(view, action) {
  view.prompts = (view.prompts || []).filter((p) => p.action !== action);
}

// The server's choice of channel (protocol.md, "Client frames"), so the composer names it at once
// when night falls, day breaks or the seat dies, not only after the seat's next line.
function channelsOf(view) {
  if (view.phase === "over" || !view.me) return []; // a spectator writes nowhere
  if (!view.me.alive) return ["dead"];
  if (!String(view.phase).startsWith("night.")) return ["day"];
  return view.wolves ? ["wolves"] : []; // the pack: every wolf card, and an infected seat
}

export function applyEvent(view, ev, mySeat) {
  switch (ev.kind) {
    case "joined": {
      // A seat already listed: a human took a bot's seat (its number stays, its player changes).
      const taken = view.players.findIndex((p) => p.seat === ev.seat);
      const joiner = { seat: ev.seat, name: ev.name, connected: !ev.bot, away: false, bot: !!ev.bot, phone: false };
      if (taken < 0) view.players.push(joiner);
      else view.players[taken] = joiner;
      view.roles_in_play = ev.roles_in_play; // the deal grows with the table
      break;
    }
    case "bot_seat": { // a bot plays the seat from now on (its player left or turned away), or not
      const p = view.players.find((x) => x.seat === ev.seat);
      if (p) p.bot = ev.bot;
      break;
    }
    case "presence": {
      const p = view.players.find((x) => x.seat === ev.seat);
      if (p) p.connected = ev.connected;
      break;
    }
    case "settings":
      view.settings = ev.settings;
      view.roles_in_play = ev.roles_in_play;
      break;
    case "spectators":
      view.spectators = ev.count;
      break;
    case "table": // made public (listed, starts by itself), or private said again; played on one phone
      view.public = ev.public;
      view.language = ev.language;
      view.phone = ev.phone;
      // the seats on the phone, the others online (RULES.md "One phone + online")
      for (const player of view.players) player.phone = (ev.phone_seats || []).includes(player.seat);
      if (!ev.public) view.starts_at = null;
      break;
    case "countdown":
      view.starts_at = ev.starts_at;
      break;
    case "away": {
      const p = view.players.find((x) => x.seat === ev.seat);
      if (p) p.away = ev.away;
      break;
    }
    case "remove_vote":
      view.remove_votes = { ...(view.remove_votes || {}), [ev.seat]: { votes: ev.votes, needed: ev.needed } };
      break;
    case "removed": {
      // Seat k is gone; the last seat m (if any) now sits at k: the list stays 0..n-1.
      const k = ev.seat;
      const m = ev.moved;
      if (m != null) {
        const last = view.players.find((x) => x.seat === m);
        view.players = view.players.filter((x) => x.seat !== k && x.seat !== m);
        if (last) view.players.push({ ...last, seat: k });
      } else {
        view.players = view.players.filter((x) => x.seat !== k);
      }
      view.players.sort((a, b) => a.seat - b.seat);
      // The gone seat's votes went with it and fewer seats need another majority: the event
      // carries every count as it stands now.
      view.remove_votes = ev.remove_votes;
      if (ev.roles_in_play) view.roles_in_play = ev.roles_in_play;
      break;
    }
    case "cards": // dead_see_roles: every card, to a seat as it dies
      view.cards = ev.cards;
      break;
    case "game_started":
      view.status = "running";
      view.roles_in_play = ev.roles_in_play;
      view.turn = ev.turn ?? null; // one phone: each player's turn (s)
      view.seats = ev.seats.map((s) => ({ seat: s.seat, name: s.name, alive: true, role: null, mayor: false }));
      view.me = mySeat == null ? null : { seat: mySeat, role: null, alive: true };
      // Nobody writes until the first phase opens (its event follows the cards).
      forgetFacts(view);
      Object.assign(view, { prompts: [], votes: {}, tally: {}, pointing: {}, mayor: null,
        channels: [] });
      view.chat = view.chat || {};
      break;
    case "role":
      // A new card (the deal, or a Thief's theft): a wolf's "wolves" event always follows it.
      view.me.role = ev.role;
      seatOf(view, mySeat).role = ev.role;
      view.wolves = null;
      break;
    case "idiot_revealed":
      seatOf(view, ev.seat).role = ev.role;
      break;
    case "lovers":
      // Cupid hears of the couple too, and may be one of them.
      if (ev.lovers.includes(mySeat)) view.lover = ev.lovers.find((s) => s !== mySeat) ?? mySeat;
      if (view.me.role === "cupid") view.linked = ev.lovers;
      break;
    case "phase":
      // Votes, tallies, the pack's pointing and ask-to-vote counts belong to one phase.
      Object.assign(view, { phase: ev.phase, day: ev.day, deadline: ev.deadline, votes: {}, tally: {}, pointing: {} });
      view.waiting = null; // exact in a welcome only: unknown once the phase changes
      view.channels = channelsOf(view);
      if (ev.phase !== "day.discussion") view.requests = null;
      break;
    case "clock": // one phone: the phase that waited for the phone's dawn starts its clock
      if (view.phase === ev.phase) view.deadline = ev.deadline;
      break;
    case "prompt": {
      dropPrompt(view, ev.action);
      const { action, choices, min, max, deadline } = ev;
      view.prompts.push({ action, choices, min, max, deadline });
      if (ev.action === "vote.request" && !view.requests) view.requests = { count: 0, needed: null, mine: false };
      break;
    }
    case "prompt_closed":
      dropPrompt(view, ev.action);
      break;
    case "pointed":
      view.pointing = { ...view.pointing, [ev.seat]: ev.target };
      break;
    case "thief_cards": // the cards his prompts take, named on their buttons
      view.thief_cards = ev.cards;
      break;
    case "witch_victim":
      view.witch = { ...(view.witch || {}), victim: ev.victim, guarded: !!ev.guarded };
      break;
    case "death": {
      const s = seatOf(view, ev.seat);
      if (s) Object.assign(s, { alive: false, role: ev.role });
      if (ev.seat === mySeat) {
        view.me.alive = false;
        view.waiting = null;
        view.channels = channelsOf(view);
      }
      break;
    }
    case "mayor":
      view.mayor = ev.seat;
      for (const s of view.seats || []) s.mayor = s.seat === ev.seat;
      break;
    case "vote_requested":
      view.requests = {
        count: ev.count,
        needed: ev.needed,
        mine: Boolean(view.requests?.mine) || ev.seat === mySeat,
      };
      break;
    case "voted":
      view.votes = { ...view.votes, [ev.seat]: ev.target };
      view.tally = ev.tally;
      break;
    case "vote_result":
      view.tally = ev.tally;
      break;
    case "chat":
      view.chat = view.chat || {};
      (view.chat[ev.channel] = view.chat[ev.channel] || []).push({
        channel: ev.channel, seat: ev.seat, name: ev.name, text: ev.text, ts: ev.ts,
      });
      break;
    case "closed": // the room closed without a game: the end screen says why
      view.status = "finished";
      view.prompts = [];
      view.outcome = { winners: [], reason: `closed_${ev.reason}` };
      break;
    case "game_over":
      view.status = "finished";
      view.phase = "over";
      view.deadline = null;
      view.prompts = [];
      view.channels = [];
      view.waiting = null;
      view.outcome = { winners: ev.winners, reason: ev.reason };
      view.final = { alive: ev.alive, roles: ev.roles, chat: ev.chat, story: ev.story };
      for (const s of view.seats || []) s.role = ev.roles[s.seat] ?? ev.roles[String(s.seat)] ?? s.role;
      break;
  }
  tellFact(view, ev);
}
