// The viewer's time zone: sent with chat messages (a new watch runs in it unless the message
// names another); times on the page are shown in it by Intl's defaults.

/** The browser's IANA time zone ("Europe/Paris"), or null when it has none to say. */
export function browserZone() {
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    return typeof zone === "string" && zone && zone.length <= 64 ? zone : null;
  } catch {
    return null;
  }
}

/** A chat message's body: its text and, when known, the sender's time zone. */
export function messageBody(text) {
  const zone = browserZone();
  return zone ? { text, timezone: zone } : { text };
}
