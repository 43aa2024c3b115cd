/** A value that survives `JSON.stringify` / `JSON.parse` unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/** A JSON object: string keys, JSON values. */
export type JsonObject = { [key: string]: JsonValue };
