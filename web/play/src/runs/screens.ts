// The autobattler's screens: the player's runs (#/runs), one run's shop and battles
// (#/runs/ID), and the leaderboards (#/leaderboard).

export { leaderboardScreen } from "./leaderboard.js";
export { runsScreen } from "./list.js";
export { runScreen } from "./run.js";
