/**
 * The graph drawn with cytoscape.js: nodes coloured by table, edges by edge table, with a legend
 * of both. Clicking a node (or its Expand button in the list beside, for the keyboard) adds its
 * neighbourhood; the force-directed layout (cose) stays readable to a few hundred nodes. The
 * view exports as PNG (cytoscape's renderer) or SVG (drawn here from the laid-out positions).
 * A diff colours nodes and edges as added, removed or changed instead.
 */
import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import { answer, api, failureText } from '../shared/api.js';
import { button, h, replace, statusBox } from '../shared/dom.js';
import { diffColour, DIFF_COLOURS, type DiffMark } from './diff-marks.js';
import { graphSvg } from './graph-svg.js';
import { labelProp, tableOf, type SchemaInfo } from './schema-info.js';

const PALETTE = ['#0b5cad', '#b26b00', '#1a7f37', '#6639ba', '#b42318', '#0e7c86', '#8a5a00', '#bf3989', '#57606a', '#2da44e'];

export interface GraphNode {
  table: string;
  key: string;
  row: Record<string, unknown>;
  mark?: DiffMark;
}
export interface GraphEdge {
  table: string;
  key: string;
  from: string;
  to: string;
  mark?: DiffMark;
}

export interface GraphView {
  add(nodes: GraphNode[], edges: GraphEdge[]): void;
  /** How many nodes and edges are drawn. */
  size(): { nodes: number; edges: number };
  destroy(): void;
}

export const nodeId = (table: string, key: string): string => `${table}/${key}`;

/** Colours by table name, stable for a schema: tables in schema order take the palette in turn. */
function colours(info: SchemaInfo): Map<string, string> {
  return new Map(info.schema.types.map((t, i) => [t.name, PALETTE[i % PALETTE.length] as string]));
}

export function graphView(
  container: HTMLElement,
  opts: { info: SchemaInfo; at: string; onOpen: (table: string, key: string) => void; diff?: boolean },
): GraphView {
  const { info, at } = opts;
  const colour = colours(info);
  const canvas = h('div', { class: 'graph', id: 'graph', role: 'img', 'aria-label': 'the graph; the list below holds the same nodes' });
  const legend = h('div', { class: 'legend', id: 'legend', 'aria-label': 'legend' });
  const list = h('ul', { id: 'graph-nodes', class: 'node-list' });
  const status = h('div', { id: 'graph-status', 'aria-live': 'polite', class: 'muted' });
  const exports = h('div', { class: 'row' }, [
    button('Export PNG', () => download('graph.png', cy.png({ full: true, output: 'blob', bg: '#ffffff', scale: 2 }) as Blob), {
      id: 'export-png',
    }),
    button('Export SVG', () => download('graph.svg', new Blob([graphSvg(cy)], { type: 'image/svg+xml' })), { id: 'export-svg' }),
  ]);
  replace(container, legend, canvas, exports, status, h('details', {}, [h('summary', { text: 'Nodes shown (keyboard)' }), list]));
  const cy: Core = cytoscape({
    container: canvas,
    // A handful of nodes is not blown up to fill the view.
    maxZoom: 1.6,
    minZoom: 0.05,
    style: [
      {
        selector: 'node',
        style: {
          'background-color': 'data(colour)',
          label: 'data(label)',
          'font-size': 10,
          'text-valign': 'bottom',
          'text-margin-y': 3,
          width: 18,
          height: 18,
          'border-width': 'data(border)',
          'border-color': 'data(ring)',
        },
      },
      {
        selector: 'edge',
        style: {
          'line-color': 'data(colour)',
          'target-arrow-color': 'data(colour)',
          'target-arrow-shape': 'triangle',
          'curve-style': 'bezier',
          width: 2,
          'arrow-scale': 0.8,
        },
      },
      { selector: 'node:selected', style: { 'border-width': 3, 'border-color': '#111' } },
    ],
  });
  const legendOf = () => {
    const nodes = new Set(cy.nodes().map((n) => n.data('table') as string));
    const edges = new Set(cy.edges().map((e) => e.data('table') as string));
    const items = opts.diff
      ? Object.entries(DIFF_COLOURS).map(([mark, c]) => h('span', {}, [h('span', { class: 'swatch', style: `background:${c}` }), mark]))
      : [
          ...[...nodes]
            .sort()
            .map((t) => h('span', { 'data-legend': t }, [h('span', { class: 'dot', style: `background:${colour.get(t)}` }), t])),
          ...[...edges]
            .sort()
            .map((t) => h('span', { 'data-legend': t }, [h('span', { class: 'swatch', style: `background:${colour.get(t)}` }), t])),
        ];
    replace(legend, ...items);
  };
  const expand = async (table: string, key: string) => {
    status.textContent = `Expanding ${table} ${key}…`;
    try {
      const r = await answer(api().POST('/walks/neighborhood', { body: { at, from: { table, key }, hops: 1, first: 200 } }));
      view.add(r.nodes, r.edges);
      status.textContent = `${table} ${key}: ${r.nodes.length - 1} neighbour(s)${r.truncated ? ' (the first 200)' : ''}. ${cy.nodes().length} nodes shown.`;
    } catch (e) {
      replace(status, statusBox('bad', failureText(e)));
    }
  };
  cy.on('tap', 'node', (e) => {
    const n = e.target;
    if (!opts.diff) void expand(n.data('table') as string, n.data('key') as string);
  });
  const view: GraphView = {
    add(nodes, edges) {
      const fresh: ElementDefinition[] = [];
      for (const n of nodes) {
        const id = nodeId(n.table, n.key);
        if (cy.getElementById(id).nonempty()) continue;
        const prop = labelProp(tableOf(info, n.table));
        const label = prop !== undefined && typeof n.row[prop] === 'string' ? `${n.row[prop] as string}` : n.key;
        const c = n.mark ? diffColour(n.mark) : (colour.get(n.table) ?? '#888');
        fresh.push({
          group: 'nodes',
          data: { id, table: n.table, key: n.key, label: label.slice(0, 40), colour: c, border: n.mark ? 2 : 0, ring: c },
        });
        list.append(nodeItem(n, label));
      }
      for (const e of edges) {
        const id = `${e.table}/${e.key}`;
        if (cy.getElementById(id).nonempty()) continue;
        const t = tableOf(info, e.table);
        if (t?.kind !== 'edge') continue;
        const from = nodeId(t.from, e.from);
        const to = nodeId(t.to, e.to);
        if (cy.getElementById(from).empty() && !fresh.some((f) => f.data.id === from)) continue;
        if (cy.getElementById(to).empty() && !fresh.some((f) => f.data.id === to)) continue;
        fresh.push({
          group: 'edges',
          data: { id, table: e.table, source: from, target: to, colour: e.mark ? diffColour(e.mark) : (colour.get(e.table) ?? '#888') },
        });
      }
      cy.add(fresh);
      cy.layout({
        name: 'cose',
        animate: false,
        randomize: false,
        nodeRepulsion: () => 9000,
        idealEdgeLength: () => 70,
        fit: true,
        padding: 24,
      }).run();
      legendOf();
    },
    size: () => ({ nodes: cy.nodes().length, edges: cy.edges().length }),
    destroy: () => cy.destroy(),
  };
  function nodeItem(n: GraphNode, label: string): HTMLLIElement {
    return h('li', { 'data-node': nodeId(n.table, n.key) }, [
      `${n.table} ${label}${n.mark ? ` (${n.mark})` : ''} `,
      opts.diff ? null : button('Expand', () => void expand(n.table, n.key), { 'aria-label': `expand ${n.table} ${n.key}` }),
      ' ',
      button('Open', () => opts.onOpen(n.table, n.key), { 'aria-label': `open ${n.table} ${n.key}` }),
    ]);
  }
  return view;
}

function download(name: string, blob: Blob): void {
  const a = h('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 0);
}
