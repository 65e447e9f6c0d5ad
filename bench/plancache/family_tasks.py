"""Families over tasks, settings and orders (see `families.py`)."""

from __future__ import annotations

from families import Family, Twin, done_status, plan, step, task_list_answer

V = "${step1.id}"

TASKS = (
    Family(
        name="list_open_tasks",
        clauses=(("list", "tasks"),),
        slots={},
        en=(
            "list my open tasks",
            "show me my open tasks",
            "what tasks are still open?",
            "which tasks do I still have open",
            "can you list the tasks that are open",
        ),
        it=("elenca i miei task aperti", "quali attività sono ancora aperte?"),
        plan=lambda v, ver: plan(step("list_tasks", status="open"), final=task_list_answer(ver)),
        twins=(Twin(family="list_done_tasks", kind="polarity"),),
    ),
    Family(
        name="list_done_tasks",
        clauses=(("list", "tasks"),),
        slots={},
        en=(
            "list my done tasks",
            "show the tasks I have done",
            "which tasks are done?",
            "list my completed tasks",
        ),
        it=("elenca i task completati", "quali task ho finito?"),
        plan=lambda v, ver: plan(
            step("list_tasks", status=done_status(ver)), final=task_list_answer(ver)
        ),
        twins=(Twin(family="list_open_tasks", kind="polarity"),),
    ),
    Family(
        name="show_task",
        clauses=(("get", "task"),),
        slots={"task": "task"},
        en=(
            "show task {task}",
            "what is task {task}?",
            "details of task {task}",
            "tell me about task number {task}",
        ),
        it=("mostra il task {task}", "dettagli del task {task}"),
        plan=lambda v, ver: plan(
            step("get_task", task_id=v["task"]), final="Task ${step1.id}: ${step1.title}."
        ),
        twins=(Twin(values={"task": 40}, kind="number"), Twin(family="complete_task", kind="verb")),
    ),
    Family(
        name="tasks_tagged",
        clauses=(("list", "tasks"),),
        slots={"tag": "tag"},
        en=("list tasks tagged {tag}", "show my {tag} tasks", "which tasks have the tag {tag}"),
        it=("elenca i task con etichetta {tag}", "mostra i task {tag}"),
        plan=lambda v, ver: plan(step("list_tasks", tag=v["tag"]), final="${step1.count} tasks."),
        twins=(Twin(values={"tag": "home"}, kind="object"),),
    ),
    Family(
        name="tasks_due_today",
        clauses=(("list", "tasks"),),
        slots={},
        en=("which tasks are due today", "what's due today?", "tasks due today"),
        it=("quali task scadono oggi?",),
        plan=lambda v, ver: plan(
            step("list_tasks", due="${RUNTIME:today}", status="open"), final=task_list_answer(ver)
        ),
        twins=(Twin(family="tasks_due_tomorrow", kind="temporal"),),
    ),
    Family(
        name="tasks_due_tomorrow",
        clauses=(("list", "tasks"),),
        slots={},
        en=("which tasks are due tomorrow", "what's due tomorrow?"),
        it=("quali task scadono domani?",),
        plan=lambda v, ver: plan(
            step("list_tasks", due="${RUNTIME:now_plus_1d}", status="open"),
            final=task_list_answer(ver),
        ),
        twins=(Twin(family="tasks_due_today", kind="temporal"),),
    ),
    Family(
        name="complete_task",
        clauses=(("complete", "task"),),
        slots={"task": "task"},
        en=(
            "complete task {task}",
            "mark task {task} as done",
            "task {task} is done",
            "I finished task {task}",
            "close task {task}",
        ),
        it=("completa il task {task}", "segna il task {task} come fatto"),
        plan=lambda v, ver: plan(step("complete_task", task_id=v["task"]), final=f"Done: {V}."),
        twins=(
            Twin(family="reopen_task", kind="polarity"),
            Twin(family="delete_task", kind="verb"),
            Twin(values={"task": 40}, kind="number"),
        ),
        effectful=True,
    ),
    Family(
        name="reopen_task",
        clauses=(("reopen", "task"),),
        slots={"task": "task"},
        en=("reopen task {task}", "mark task {task} as not done", "task {task} is not done yet"),
        it=("riapri il task {task}",),
        plan=lambda v, ver: plan(step("reopen_task", task_id=v["task"]), final=f"Reopened {V}."),
        twins=(Twin(family="complete_task", kind="polarity"),),
        effectful=True,
    ),
    Family(
        name="delete_task",
        clauses=(("delete", "task"),),
        slots={"task": "task"},
        en=(
            "delete task {task}",
            "remove task {task}",
            "get rid of task {task}",
            "erase task {task}",
        ),
        it=("elimina il task {task}", "cancella il task {task}"),
        plan=lambda v, ver: plan(step("delete_task", task_id=v["task"]), final=f"Deleted {V}."),
        twins=(
            Twin(family="delete_two_tasks", kind="extra_clause"),
            Twin(family="complete_task", kind="verb"),
            Twin(values={"task": 40}, kind="number"),
        ),
        effectful=True,
    ),
    Family(
        name="delete_two_tasks",
        clauses=(("delete", "task"), ("delete", "task")),
        slots={"task": "task", "task2": "task2"},
        en=("delete task {task} and task {task2}", "remove tasks {task} and {task2}"),
        it=("elimina i task {task} e {task2}",),
        plan=lambda v, ver: plan(
            step("delete_task", task_id=v["task"]),
            step("delete_task", task_id=v["task2"]),
            final="Deleted ${step1.id} and ${step2.id}.",
        ),
        twins=(Twin(family="delete_task", kind="extra_clause"),),
        effectful=True,
    ),
    Family(
        name="complete_and_delete",
        clauses=(("complete", "task"), ("delete", "task")),
        slots={"task": "task", "task2": "task2"},
        en=(
            "complete task {task} and delete task {task2}",
            "finish task {task}, then delete task {task2}",
        ),
        it=("completa il task {task} ed elimina il task {task2}",),
        plan=lambda v, ver: plan(
            step("complete_task", task_id=v["task"]),
            step("delete_task", task_id=v["task2"]),
            final="Done ${step1.id}, deleted ${step2.id}.",
        ),
        twins=(Twin(family="complete_task", kind="extra_clause"),),
        effectful=True,
    ),
    Family(
        name="create_task",
        clauses=(("create", "task"),),
        slots={"title": "title"},
        en=('add a task "{title}"', 'create a task called "{title}"', 'new task: "{title}"'),
        it=('aggiungi un task "{title}"', 'crea il task "{title}"'),
        plan=lambda v, ver: plan(step("create_task", title=v["title"]), final=f"Created {V}."),
        twins=(Twin(values={"title": "pay rent"}, kind="object"),),
        effectful=True,
    ),
)

SETTINGS = (
    Family(
        name="feature_status",
        clauses=(("get", "setting"),),
        slots={"feature": "feature"},
        en=(
            "is {feature} enabled?",
            "check whether {feature} is on",
            "what's the status of {feature}",
        ),
        it=("{feature} è attiva?",),
        plan=lambda v, ver: plan(
            step("get_setting", feature=v["feature"]), final="${step1.feature}: ${step1.enabled}."
        ),
        twins=(Twin(family="enable_feature", kind="verb"),),
    ),
    Family(
        name="enable_feature",
        clauses=(("enable", "feature"),),
        slots={"feature": "feature"},
        en=("enable {feature}", "turn on {feature}", "switch {feature} on", "activate {feature}"),
        it=("attiva {feature}", "abilita {feature}"),
        plan=lambda v, ver: plan(step("enable_feature", feature=v["feature"]), final="Enabled."),
        twins=(
            Twin(family="disable_feature", kind="polarity"),
            Twin(values={"feature": "location_sharing"}, kind="object"),
        ),
        effectful=True,
    ),
    Family(
        name="disable_feature",
        clauses=(("disable", "feature"),),
        slots={"feature": "feature"},
        en=(
            "disable {feature}",
            "turn off {feature}",
            "switch {feature} off",
            "deactivate {feature}",
        ),
        it=("disattiva {feature}", "disabilita {feature}"),
        plan=lambda v, ver: plan(step("disable_feature", feature=v["feature"]), final="Disabled."),
        twins=(Twin(family="enable_feature", kind="polarity"),),
        effectful=True,
    ),
)

ORDERS = (
    Family(
        name="orders_of",
        clauses=(("find", "orders"),),
        slots={"customer": "customer"},
        en=(
            "show orders for {customer}",
            "what did {customer} order?",
            "list the orders of {customer}",
        ),
        it=("mostra gli ordini di {customer}",),
        plan=lambda v, ver: plan(
            step("find_orders", customer=v["customer"]), final="${step1.count} orders."
        ),
        twins=(Twin(values={"customer": "frank@shop.io"}, kind="object"),),
    ),
    Family(
        name="order_status",
        clauses=(("get", "order"),),
        slots={"order": "order"},
        en=("status of order {order}", "where is order {order}?", "check order {order}"),
        it=("stato dell'ordine {order}",),
        plan=lambda v, ver: plan(
            step("get_order", order_id=v["order"]), final="${step1.order_id}: ${step1.status}."
        ),
        twins=(
            Twin(family="cancel_order", kind="verb"),
            Twin(values={"order": "W140"}, kind="number"),
        ),
    ),
    Family(
        name="cancel_order",
        clauses=(("cancel", "order"),),
        slots={"order": "order"},
        en=("cancel order {order}", "please cancel my order {order}", "call off order {order}"),
        it=("annulla l'ordine {order}", "cancella l'ordine {order}"),
        plan=lambda v, ver: plan(
            step("cancel_order", order_id=v["order"]), final="${step1.order_id}: ${step1.status}."
        ),
        twins=(
            Twin(family="dont_cancel_order", kind="negation"),
            Twin(family="refund_order", kind="verb"),
            Twin(values={"order": "W140"}, kind="number"),
        ),
        effectful=True,
    ),
    Family(
        name="dont_cancel_order",
        clauses=(("get", "order"),),
        slots={"order": "order"},
        en=(
            "don't cancel order {order}, just check its status",
            "do not cancel order {order}; what is its status?",
        ),
        it=("non annullare l'ordine {order}, controlla solo lo stato",),
        plan=lambda v, ver: plan(
            step("get_order", order_id=v["order"]), final="${step1.order_id}: ${step1.status}."
        ),
        twins=(Twin(family="cancel_order", kind="negation"),),
    ),
    Family(
        name="refund_order",
        clauses=(("refund", "order"),),
        slots={"order": "order"},
        en=("refund order {order}", "give a refund for order {order}", "refund my order {order}"),
        it=("rimborsa l'ordine {order}",),
        plan=lambda v, ver: plan(
            step("refund_order", order_id=v["order"]), final="${step1.order_id}: ${step1.status}."
        ),
        twins=(Twin(family="cancel_order", kind="verb"),),
        effectful=True,
    ),
)
