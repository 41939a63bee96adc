// A websocket's frames as named events, for both protocols' clients: each JSON object whose
// `key` field is a string is emitted under that name; anything else as "garbled" (its first
// 200 characters, for the page to show).
export function emitFrames(socket, key, emit) {
  socket.addEventListener("message", (event) => {
    let message = null;
    try {
      message = JSON.parse(event.data);
    } catch {
      // not JSON: garbled, below
    }
    if (message && typeof message[key] === "string") emit(message[key], message);
    else emit("garbled", String(event.data).slice(0, 200));
  });
}
