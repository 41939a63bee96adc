// The two chats: the lobby's and the open game's table (the last 50 lines of each).

import { node } from "../../dom.js";
import { currentGame, playerName, seatName } from "../model.js";

function chatLine(line, name) {
  const server = line.sender === 0;
  return node("li", { class: `chat-line${server ? " server" : ""}${line.recipient_ids?.length ? " private" : ""}` },
    server ? null : node("strong", {}, `${name}: `), line.text);
}

export function createChatView(state) {
  const $ = (id) => document.getElementById(id);
  function render() {
    const lobbyList = $("lobby-chat");
    lobbyList.replaceChildren(...state.lobbyChat.slice(-50).map((line) => chatLine(line, playerName(state, line.sender))));
    lobbyList.scrollTop = lobbyList.scrollHeight;
    const g = currentGame(state);
    const gameList = $("game-chat");
    gameList.replaceChildren(...(g ? g.chat.slice(-50).map((line) => chatLine(line, seatName(g, line.sender))) : []));
    gameList.scrollTop = gameList.scrollHeight;
    $("game-chat-form").hidden = Boolean(g?.observing) || g?.status === "NOT_STARTED";
  }
  return { panel: "chat", render };
}
