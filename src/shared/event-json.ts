/**
 * An event's JSON text, made once: the SSE writer frames it and the run record stores the same
 * text (events are never changed once stamped, so the text stays theirs).
 */
const texts = new WeakMap<object, string>();

export function eventJson(event: object): string {
  let text = texts.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    texts.set(event, text);
  }
  return text;
}
