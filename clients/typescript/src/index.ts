// cryptid-client: the Cryptid backend's client for browsers and Node.js. See README.md.

export {
  type ActionDone,
  type Battle,
  type ClientOptions,
  CryptidClient,
  createClient,
  type EventBatch,
  type GameCatalogue,
  type GameInfo,
  type Joined,
  type MatchList,
  type MatchReplay,
  type MatchState,
  type Me,
  type Prompt,
  type Queued,
  type Run,
  type ShopMove,
  type SimulateAnswer,
  type SimulateRequest,
  type Ticket,
  type TurnResult,
} from "./client.js";
export {
  type BattleEvent,
  type BattleReplay,
  nameEvent,
  nameEvents,
  type ReplayWire,
  type WireBattleEvent,
} from "./battles.js";
export { CryptidError } from "./errors.js";
export {
  type FollowHandle,
  type FollowOptions,
  type WebSocketConstructor,
  type WebSocketLike,
  type WireEvent,
} from "./follow.js";
export {
  type CryptidCatalogue,
  parseReplay,
  type Simulation,
  simulate,
  type Verdict,
  verify,
  type WarbandSlots,
} from "./resim.js";
export type { Player, SignedIn } from "./session.js";
export { LocalStorageStorage, MemoryStorage, newDeviceId, type SessionStorage } from "./storage.js";
export { DEFAULT_RETRY, type RetryPolicy } from "./transport.js";
export { decodeMsgpack, encodeMsgpack, type Int64, parseJson } from "./wire.js";
export type { components, paths } from "./schema.js";
