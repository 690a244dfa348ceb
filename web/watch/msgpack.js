// A msgpack encoder for replays, so a client can compare its replay with the server's byte for
// byte (the golden corpus stores the SHA-256 of `msgpack.packb(replay)`). It writes what the
// Python msgpack package writes: the shortest form of each integer, string and container.

const utf8 = new TextEncoder();

/** The msgpack bytes of a value made of maps, arrays, strings, integers and BigInts. */
export function pack(value) {
  const out = [];
  const bytes = (...list) => out.push(...list);
  const be = (n, width) => {
    let v = BigInt.asUintN(width * 8, BigInt(n));
    const chunk = new Array(width);
    for (let i = width - 1; i >= 0; i--) {
      chunk[i] = Number(v & 0xffn);
      v >>= 8n;
    }
    out.push(...chunk);
  };
  const length = (n, fix, fixMax, codes) => {
    if (n <= fixMax) bytes(fix | n);
    else if (codes[0] !== null && n < 0x100) bytes(codes[0], n);
    else if (n < 0x10000) { bytes(codes[1]); be(n, 2); }
    else { bytes(codes[2]); be(n, 4); }
  };
  const write = (v) => {
    if (typeof v === "number" || typeof v === "bigint") {
      const n = BigInt(v);
      if (n >= 0n) {
        if (n < 0x80n) bytes(Number(n));
        else if (n < 0x100n) { bytes(0xcc); be(n, 1); }
        else if (n < 0x10000n) { bytes(0xcd); be(n, 2); }
        else if (n < 0x100000000n) { bytes(0xce); be(n, 4); }
        else { bytes(0xcf); be(n, 8); }
      } else if (n >= -32n) bytes(Number(BigInt.asUintN(8, n)));
      else if (n >= -0x80n) { bytes(0xd0); be(n, 1); }
      else if (n >= -0x8000n) { bytes(0xd1); be(n, 2); }
      else if (n >= -0x80000000n) { bytes(0xd2); be(n, 4); }
      else { bytes(0xd3); be(n, 8); }
    } else if (typeof v === "string") {
      const data = utf8.encode(v);
      length(data.length, 0xa0, 31, [0xd9, 0xda, 0xdb]);
      for (const b of data) out.push(b);
    } else if (Array.isArray(v)) {
      length(v.length, 0x90, 15, [null, 0xdc, 0xdd]);
      v.forEach(write);
    } else if (v === null) {
      bytes(0xc0);
    } else if (typeof v === "boolean") {
      bytes(v ? 0xc3 : 0xc2);
    } else {
      const entries = Object.entries(v);
      length(entries.length, 0x80, 15, [null, 0xde, 0xdf]);
      for (const [key, item] of entries) {
        write(key);
        write(item);
      }
    }
  };
  write(value);
  return Uint8Array.from(out);
}

/** The replay's wire form, keys in the server's order (docs/rules/cryptids.md). */
export function wire(replay) {
  const { format, ruleset, seed, a, b, events, hashes } = replay;
  return { format, ruleset, seed, a, b, events, hashes };
}
