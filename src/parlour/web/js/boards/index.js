// Boards by game. A board is a class with a static `kind`, a constructor (host element,
// {onPawn(key), onTarget(target)}) and render(scene); the page knows boards only through
// createBoard, so another game's board is one more module registered here.

import { ApologiesBoard } from "./apologies.js";

const BOARDS = new Map();

export function registerBoard(boardClass) {
  BOARDS.set(boardClass.kind, boardClass);
}

export function createBoard(kind, host, handlers) {
  const Board = BOARDS.get(kind);
  if (!Board) throw new Error(`no board for ${kind}`);
  return new Board(host, handlers);
}

registerBoard(ApologiesBoard);
