# A small shop service on Flask (Debian's python3-flask), run by gunicorn
# as `apps_wsgi_shop:app`: the target of suite_apps' gunicorn tests.
#
# Three endpoints, each a view that measures itself: /quote/N prices N items
# in a Python loop (CPU), /catalog/N renders N rows through a Jinja2 template
# (CPU in the library), /stock/MS waits MS milliseconds for a "warehouse"
# (a sleep: off the CPU). Each view measures its own body's thread CPU time
# and wall time (ns); after the view has returned (Flask's after_request,
# outside the view's frame, so that writing it down is not in the view's
# time), the worker adds them up per view with the request count and writes
# the totals to $APPS_TRUTH_DIR/truth-PID.json (written aside and renamed, so
# a reader never sees half a file). /ping answers "pong".
import json
import os
import threading
import time

from flask import Flask, g, render_template_string

app = Flask(__name__)
lock = threading.Lock()
spent = {}

ROWS = """<table>{% for i in rows %}<tr><td>{{ i }}</td><td>{{ "%08d"|format(i * 7919)
}}</td><td>{{ (i * 31) % 17 }}</td></tr>{% endfor %}</table>"""


@app.after_request
def record(response):
    if "measured" in g:
        view, cpu_ns, wall_ns = g.measured
        write_down(view, cpu_ns, wall_ns)
    return response


def write_down(view, cpu_ns, wall_ns):
    with lock:
        per = spent.setdefault(view, {"cpu_ns": 0, "wall_ns": 0, "requests": 0})
        per["cpu_ns"] += cpu_ns
        per["wall_ns"] += wall_ns
        per["requests"] += 1
        path = os.path.join(os.environ["APPS_TRUTH_DIR"], f"truth-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(spent, f)
        os.rename(path + ".tmp", path)


@app.route("/quote/<int:n>")
def price_quote(n):
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    total = 0
    for i in range(n):
        total += (i * 2654435761) % 1000003 // 7  # QUOTE-HOT
    g.measured = ("price_quote", time.thread_time_ns() - c0, time.perf_counter_ns() - w0)
    return {"items": n, "total": total}


@app.route("/catalog/<int:n>")
def catalog_page(n):
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    page = render_template_string(ROWS, rows=range(n))  # CATALOG-RENDER
    g.measured = ("catalog_page", time.thread_time_ns() - c0, time.perf_counter_ns() - w0)
    return page


@app.route("/stock/<int:ms>")
def stock_check(ms):
    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
    time.sleep(ms / 1000)  # STOCK-WAIT
    g.measured = ("stock_check", time.thread_time_ns() - c0, time.perf_counter_ns() - w0)
    return {"sku": ms, "in_stock": ms % 3 != 0}


@app.route("/ping")
def ping():
    return "pong"
