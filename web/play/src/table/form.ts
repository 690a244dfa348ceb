// Controls generated from JSON Schema: a game's loadout (`Loadout_<game>` in GET /v1/games) and a
// prompt's parameters (docs/architecture.md#the-match-kernel: `type`, `enum`, `minimum`,
// `maximum`, `items`, `uniqueItems`, `minItems`, `maxItems`). Each control starts from a given
// value (a suggested loadout, or the first legal value of a parameter) and reads back what the
// player chose. The server checks what is sent and says why it refuses, so the controls only
// offer, they do not judge.

import { h } from "../app.js";
import type { Names } from "./names.js";
import { capitalised, isObject, type Json, words } from "./render.js";

export interface Control {
  element: HTMLElement;
  /** The chosen value; undefined leaves the field out. Throws when the text is not a value. */
  read(): unknown;
}

interface Choice {
  value: unknown;
  label: string;
  group: string;
}

let made = 0;
const newId = (hint: string) => `f${++made}-${hint.replace(/[^\w-]/g, "")}`;

/** A control for `schema`, starting at `value`, labelled `label`. */
export function schemaControl(schema: Json, value: unknown, label: string, names: Names): Control {
  if ("const" in schema) {
    const fixed = schema.const;
    return { element: h("p", { class: "fixed" }, `${label}: ${String(fixed)}`), read: () => fixed };
  }
  const choices = choicesOf(schema, names);
  if (choices !== null) return selectControl(choices, value, label);
  if (schema.type === "integer" || schema.type === "number") {
    return numberControl(schema, value, label);
  }
  if (schema.type === "boolean") return checkboxControl(value === true, label);
  if (schema.type === "string") return textControl(value, label);
  if (schema.type === "array" && isObject(schema.items)) {
    const items = choicesOf(schema.items, names, schema["x-family"]);
    if (items !== null) {
      return schema.uniqueItems === true
        ? subsetControl(items, value, label)
        : countsControl(items, value, label, schema);
    }
  }
  if (isObject(schema.properties)) return objectControl(schema, value, label, names);
  return jsonControl(value, label);
}

/** The choices an `enum`, or a `oneOf` of `const`s, offers; null when it offers none. */
function choicesOf(schema: Json, names: Names, families?: unknown): Choice[] | null {
  const family = (value: unknown) =>
    isObject(families) && typeof families[String(value)] === "string"
      ? String(families[String(value)])
      : "";
  const named = (value: unknown) =>
    typeof value === "string" ? names.name(value) : words(String(value));
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value) => ({ value, label: named(value), group: family(value) }));
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.every((one) => isObject(one) && "const" in one)) {
    return (schema.oneOf as Json[]).map((one) => ({
      value: one.const,
      label: typeof one.title === "string" ? one.title : named(one.const),
      // "character, guardia_velmar": the kind comes first.
      group:
        typeof one.description === "string"
          ? one.description.split(",")[0]!.trim()
          : family(one.const),
    }));
  }
  return null;
}

function labelled(label: string, id: string, control: HTMLElement): HTMLElement {
  return h(
    "div",
    { class: "control" },
    h("label", { for: id }, capitalised(words(label))),
    control,
  );
}

function selectControl(choices: Choice[], value: unknown, label: string): Control {
  const id = newId(label);
  const select = h("select", { id, name: label });
  choices.forEach((choice, index) => {
    const option = h("option", { value: String(index) }, choice.label);
    if (JSON.stringify(choice.value) === JSON.stringify(value)) option.selected = true;
    select.append(option);
  });
  return {
    element: labelled(label, id, select),
    read: () => choices[Number(select.value)]?.value,
  };
}

function numberControl(schema: Json, value: unknown, label: string): Control {
  const id = newId(label);
  const start =
    typeof value === "number" || typeof value === "bigint" ? value : (schema.minimum ?? 0);
  const input = h("input", {
    id,
    name: label,
    type: "number",
    inputmode: "numeric",
    value: String(start),
    min: schema.minimum === undefined ? undefined : String(schema.minimum),
    max: schema.maximum === undefined ? undefined : String(schema.maximum),
  });
  return {
    element: labelled(label, id, input),
    read: () => {
      const text = input.value.trim();
      if (text === "") return undefined;
      const n = Number(text);
      // Past 2^53 a number is rounded: an integer that large goes as a 64-bit integer.
      return Number.isSafeInteger(n) || !/^-?\d+$/.test(text) ? n : BigInt(text);
    },
  };
}

function checkboxControl(checked: boolean, label: string): Control {
  const id = newId(label);
  const input = h("input", { id, name: label, type: "checkbox" });
  input.checked = checked;
  return {
    element: h(
      "div",
      { class: "control check" },
      input,
      h("label", { for: id }, capitalised(words(label))),
    ),
    read: () => input.checked,
  };
}

function textControl(value: unknown, label: string): Control {
  const id = newId(label);
  const input = h("input", {
    id,
    name: label,
    type: "text",
    value: typeof value === "string" ? value : "",
  });
  return { element: labelled(label, id, input), read: () => input.value };
}

/** A set of choices (`uniqueItems`): one checkbox each. */
function subsetControl(choices: Choice[], value: unknown, label: string): Control {
  const chosen = new Set((Array.isArray(value) ? value : []).map((v) => JSON.stringify(v)));
  const boxes = choices.map((choice) => {
    const id = newId(label);
    const input = h("input", { id, type: "checkbox" });
    input.checked = chosen.has(JSON.stringify(choice.value));
    return {
      choice,
      input,
      element: h("div", { class: "control check" }, input, h("label", { for: id }, choice.label)),
    };
  });
  return {
    element: h(
      "fieldset",
      { class: "subset" },
      h("legend", {}, capitalised(words(label))),
      ...boxes.map((box) => box.element),
    ),
    read: () => boxes.filter((box) => box.input.checked).map((box) => box.choice.value),
  };
}

/** A list that may repeat its choices (a deck): how many of each, grouped by kind. */
function countsControl(choices: Choice[], value: unknown, label: string, schema: Json): Control {
  const counts = new Map<string, number>();
  for (const item of Array.isArray(value) ? value : []) {
    const key = JSON.stringify(item);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const size =
    schema.minItems === schema.maxItems && typeof schema.minItems === "number"
      ? schema.minItems
      : null;
  const total = h("span", { class: "total" });
  const inputs = choices.map((choice) => {
    const id = newId(label);
    const input = h("input", {
      id,
      type: "number",
      inputmode: "numeric",
      min: "0",
      max: typeof schema.maxItems === "number" ? String(schema.maxItems) : undefined,
      value: String(counts.get(JSON.stringify(choice.value)) ?? 0),
    });
    return {
      choice,
      input,
      element: h("div", { class: "control count" }, input, h("label", { for: id }, choice.label)),
    };
  });
  const read = () =>
    inputs.flatMap(({ choice, input }) =>
      Array.from({ length: Math.max(0, Math.floor(Number(input.value) || 0)) }, () => choice.value),
    );
  const recount = () => {
    const n = read().length;
    total.textContent = size === null ? `${n} chosen` : `${n} of ${size}`;
  };
  const groups = new Map<string, HTMLElement[]>();
  for (const { choice, element } of inputs) {
    groups.set(choice.group, [...(groups.get(choice.group) ?? []), element]);
  }
  const body = h(
    "details",
    { class: "counts" },
    h("summary", {}, capitalised(words(label)), ": ", total),
    ...[...groups].map(([group, elements]) =>
      h("fieldset", {}, group ? h("legend", {}, capitalised(words(group))) : null, ...elements),
    ),
  );
  body.addEventListener("input", recount);
  recount();
  return { element: body, read };
}

/**
 * An object: a control per property. A property not required is offered with a box to leave it
 * out; alternatives (`oneOf` of `required` lists, such as a deck or a ready-made one) are offered
 * as a choice, the others' controls disabled.
 */
function objectControl(schema: Json, value: unknown, label: string, names: Names): Control {
  const properties = schema.properties as Record<string, Json>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const start = isObject(value) ? value : {};
  const alternatives = (Array.isArray(schema.oneOf) ? schema.oneOf : [])
    .map((one) =>
      isObject(one) && Array.isArray(one.required) ? (one.required as string[]) : null,
    )
    .filter((fields): fields is string[] => fields !== null);
  const inAlternative = new Set(alternatives.flat());
  let chosen = Math.max(
    0,
    alternatives.findIndex((fields) => fields.every((f) => f in start)),
  );
  const parts = new Map<
    string,
    { control: Control; wrapper: HTMLFieldSetElement; use?: HTMLInputElement }
  >();
  const element = h("fieldset", { class: "object" }, h("legend", {}, capitalised(words(label))));
  const refresh = () => {
    for (const [field, part] of parts) {
      if (inAlternative.has(field))
        part.wrapper.disabled = !(alternatives[chosen] ?? []).includes(field);
      else if (part.use !== undefined) part.wrapper.disabled = !part.use.checked;
    }
  };
  if (alternatives.length > 1) {
    const group = newId(`${label}-use`);
    const radios = h("div", {
      class: "alternatives",
      role: "radiogroup",
      "aria-label": `${capitalised(words(label))}: which`,
    });
    alternatives.forEach((fields, index) => {
      const id = newId(label);
      const radio = h("input", { id, type: "radio", name: group, value: String(index) });
      radio.checked = index === chosen;
      radio.addEventListener("change", () => {
        chosen = index;
        refresh();
      });
      radios.append(
        h(
          "span",
          { class: "control check" },
          radio,
          h("label", { for: id }, fields.map(words).join(" and ")),
        ),
      );
    });
    element.append(radios);
  }
  for (const [field, fieldSchema] of Object.entries(properties)) {
    const control = schemaControl(
      isObject(fieldSchema) ? fieldSchema : {},
      start[field],
      field,
      names,
    );
    const wrapper = h("fieldset", { class: "field" });
    let use: HTMLInputElement | undefined;
    if (!required.has(field) && !inAlternative.has(field)) {
      const id = newId(`${field}-use`);
      use = h("input", { id, type: "checkbox" });
      use.checked = field in start;
      use.addEventListener("change", refresh);
      element.append(
        h("div", { class: "control check" }, use, h("label", { for: id }, `Set ${words(field)}`)),
      );
    }
    wrapper.append(control.element);
    element.append(wrapper);
    parts.set(field, { control, wrapper, use });
  }
  refresh();
  return {
    element,
    read: () => {
      const out: Json = {};
      for (const [field, part] of parts) {
        if (part.wrapper.disabled) continue;
        const read = part.control.read();
        if (read !== undefined) out[field] = read;
      }
      return out;
    },
  };
}

/** Anything else, as JSON text. */
function jsonControl(value: unknown, label: string): Control {
  const id = newId(label);
  const area = h("textarea", { id, rows: "3", spellcheck: "false" });
  area.value = value === undefined ? "" : JSON.stringify(value);
  return {
    element: labelled(label, id, area),
    read: () => (area.value.trim() === "" ? undefined : JSON.parse(area.value)),
  };
}

/** A game's option (GET /v1/games `options`: type, default, min, max, choices) as a schema. */
export function optionSchema(option: Json): Json {
  if (Array.isArray(option.choices)) return { enum: option.choices };
  if (option.type === "int") return { type: "integer", minimum: option.min, maximum: option.max };
  if (option.type === "bool") return { type: "boolean" };
  if (option.type === "str") return { type: "string" };
  return {};
}
