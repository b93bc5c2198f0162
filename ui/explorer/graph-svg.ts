/**
 * The drawn graph as an SVG document, from the positions cytoscape laid out: circles, lines with
 * arrow heads, and labels, in the colours on screen. Written here rather than with a plugin: the
 * shapes are few, and the output is plain SVG any editor opens.
 */
import type { Core } from 'cytoscape';

const esc = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

export function graphSvg(cy: Core): string {
  const box = cy.elements().boundingBox({});
  const pad = 30;
  const x0 = box.x1 - pad;
  const y0 = box.y1 - pad;
  const w = Math.max(1, box.w + 2 * pad);
  const hgt = Math.max(1, box.h + 2 * pad);
  const edges = cy.edges().map((e) => {
    const s = e.source().position();
    const t = e.target().position();
    const c = esc(String(e.data('colour')));
    return `<line x1="${(s.x - x0).toFixed(1)}" y1="${(s.y - y0).toFixed(1)}" x2="${(t.x - x0).toFixed(1)}" y2="${(t.y - y0).toFixed(1)}" stroke="${c}" stroke-width="2" marker-end="url(#arrow)"><title>${esc(String(e.data('table')))}</title></line>`;
  });
  const nodes = cy.nodes().map((n) => {
    const p = n.position();
    const x = (p.x - x0).toFixed(1);
    const y = (p.y - y0).toFixed(1);
    return `<g><circle cx="${x}" cy="${y}" r="9" fill="${esc(String(n.data('colour')))}"><title>${esc(`${n.data('table')} ${n.data('key')}`)}</title></circle><text x="${x}" y="${(p.y - y0 + 21).toFixed(1)}" font-size="10" text-anchor="middle" font-family="sans-serif">${esc(String(n.data('label')))}</text></g>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w.toFixed(0)}" height="${hgt.toFixed(0)}" viewBox="0 0 ${w.toFixed(0)} ${hgt.toFixed(0)}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="19" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#57606a"/></marker></defs>
<rect width="100%" height="100%" fill="#ffffff"/>
${edges.join('\n')}
${nodes.join('\n')}
</svg>
`;
}
