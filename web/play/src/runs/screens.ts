// The autobattler's screens (placeholder until the runs screens land).

import type { Screen } from "../app.js";

export const runsScreen: Screen = () => () => {};
export const runScreen: Screen = () => () => {};
export const leaderboardScreen: Screen = () => () => {};
