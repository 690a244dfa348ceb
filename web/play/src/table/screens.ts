// The turn-based games' screens (placeholder until the table screens land).

import type { Screen } from "../app.js";

export const gamesScreen: Screen = () => () => {};
export const matchScreen: Screen = () => () => {};
