/**
 * Block Kit JSON drawn as HTML that looks like a Slack message, for the documentation's
 * screenshots: only the blocks and mrkdwn Greenlight sends (header, section, fields, context,
 * preformatted rich text, buttons). Not Slack's renderer: a faithful enough mock of its layout.
 */

/** Slack draws these as its emoji; the machine that takes the screenshots has no emoji font, so symbols stand in. */
const EMOJI: Record<string, string> = {
  warning: '<span class="emoji" style="color:#e8912d">⚠</span>',
  x: '<span class="emoji" style="color:#e01e5a">✖</span>',
  white_check_mark: '<span class="emoji" style="color:#007a5a">✔</span>',
  pencil2: '<span class="emoji" style="color:#1264a3">✎</span>',
  alarm_clock: '<span class="emoji" style="color:#e01e5a">◷</span>',
  hourglass_flowing_sand: '<span class="emoji" style="color:#e8912d">◴</span>',
  ballot_box_with_ballot: '<span class="emoji" style="color:#1264a3">☑</span>',
};

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Slack's mrkdwn, as far as Greenlight writes it. Its input arrives with &, < and > escaped as Slack wants them. */
function mrkdwn(text: string): string {
  let html = text
    // Links and dates come as <…>: Slack shows a date in the reader's zone; the mock shows its fallback.
    .replace(/<!date\^\d+\^[^|>]*\|([^>]*)>/g, (_all, fallback: string) => `\u0000span class="date"\u0001${new Date(fallback).toUTCString().replace(' GMT', ' UTC')}\u0000/span\u0001`)
    .replace(/<([^|>]+)\|([^>]+)>/g, (_all, _url: string, label: string) => `\u0000a\u0001${label}\u0000/a\u0001`);
  html = html.replace(/&(?!amp;|lt;|gt;)/g, '&amp;');
  html = html
    .replace(/`([^`]+)`/g, '\u0000code\u0001$1\u0000/code\u0001')
    .replace(/\*([^*\n]+)\*/g, '\u0000b\u0001$1\u0000/b\u0001')
    .replace(/\n/g, '\u0000br\u0001');
  return html.replace(/\u0000/g, '<').replace(/\u0001/g, '>').replace(/:([a-z0-9_]+):/g, (all, name: string) => EMOJI[name] ?? all);
}

function text(element: { type: string; text: string }): string {
  return element.type === 'mrkdwn' ? mrkdwn(element.text) : escapeHtml(element.text);
}

function block(b: Record<string, any>): string {
  switch (b.type) {
    case 'header':
      return `<div class="header">${escapeHtml(b.text.text)}</div>`;
    case 'section':
      if (b.fields) return `<div class="fields">${b.fields.map((f: any) => `<div>${text(f)}</div>`).join('')}</div>`;
      return `<div class="section">${text(b.text)}</div>`;
    case 'context':
      return `<div class="context">${b.elements.map((e: any) => `<span>${text(e)}</span>`).join('')}</div>`;
    case 'rich_text':
      return b.elements.map((e: any) => `<pre>${e.elements.map((t: any) => escapeHtml(t.text)).join('')}</pre>`).join('');
    case 'actions':
      return `<div class="actions">${b.elements.map((e: any) => `<span class="button ${e.style ?? ''}">${escapeHtml(e.text.text)}</span>`).join('')}</div>`;
    default:
      throw new Error(`the mock cannot draw a ${b.type} block`);
  }
}

/** A page with the message as a Slack channel shows it, posted by `app`. */
export function slackMessagePage(blocks: Array<Record<string, any>>, app = 'Greenlight', time = '10:04 AM'): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { margin: 0; background: #fff; font: 15px/1.46668 -apple-system, "Segoe UI", "Noto Sans", Lato, sans-serif; color: #1d1c1d; }
    .channel { padding: 10px 20px; border-bottom: 1px solid #ddd; font-weight: 900; font-size: 18px; }
    .message { display: flex; gap: 8px; padding: 12px 20px; width: 640px; }
    .avatar { width: 36px; height: 36px; border-radius: 6px; background: #1f6f43; color: #fff; display: grid; place-items: center; font-weight: 900; flex: none; }
    .who b { font-weight: 900; } .app { font-size: 10px; background: #eee; color: #555; padding: 1px 3px; border-radius: 2px; margin: 0 4px; font-weight: 700; } .time { color: #616061; font-size: 12px; }
    .header { font-size: 18px; font-weight: 900; margin: 6px 0 4px; }
    .fields { display: grid; grid-template-columns: 1fr 1fr; gap: 8px 16px; margin: 6px 0; }
    .section { margin: 6px 0; }
    .context { color: #616061; font-size: 13px; margin: 6px 0; display: flex; flex-direction: column; gap: 2px; }
    pre { background: #f8f8f8; border: 1px solid #ddd; border-radius: 4px; padding: 8px; font: 12px/1.5 Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
    code { font: 12px Monaco, Menlo, Consolas, "DejaVu Sans Mono", monospace; color: #c01343; background: #f8f8f8; border: 1px solid #ddd; border-radius: 3px; padding: 0 3px; }
    a { color: #1264a3; } .date { text-decoration: underline dotted; }
    .actions { display: flex; gap: 8px; margin: 8px 0 2px; }
    .button { border: 1px solid #bbb; border-radius: 4px; padding: 3px 12px; font-weight: 700; font-size: 13px; }
    .button.primary { background: #007a5a; border-color: #007a5a; color: #fff; } .button.danger { color: #e01e5a; border-color: #e01e5a; }
  </style></head><body>
    <div class="channel"># reviews</div>
    <div class="message"><div class="avatar">G</div><div>
      <div class="who"><b>${escapeHtml(app)}</b><span class="app">APP</span><span class="time">${escapeHtml(time)}</span></div>
      ${blocks.map(block).join('\n')}
    </div></div>
  </body></html>`;
}
