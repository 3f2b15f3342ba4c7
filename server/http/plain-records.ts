/** The prototype of every plain record: it has none itself, so a record inherits no keys. */
const NOTHING_INHERITED: object = Object.freeze(Object.create(null));

/**
 * An empty object that inherits no keys, as `Object.create(null)` makes, for request and
 * response fields whose keys come from outside or are looked up by name (`req.query`,
 * `res.locals`). V8 keeps an object made with a null prototype as a hash table from birth,
 * about 0.16 KB even empty, and a request held open keeps its own for as long as its agent
 * waits (thousands at once, for up to an hour); one whose prototype has a null prototype is a
 * compact object like any other.
 */
export function plainRecord(): Record<string, unknown> {
  return Object.create(NOTHING_INHERITED) as Record<string, unknown>;
}
