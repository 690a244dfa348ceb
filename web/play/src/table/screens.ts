// The turn-based games' screens: the games and their lobbies (#/games), and a match at its
// table (#/matches/ID).

export { gamesScreen } from "./games.js";
export { matchScreen } from "./match.js";
