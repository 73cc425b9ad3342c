"""Controllers: the window's non-widget objects (Qt, but no widgets of their own).

They own what is open and the background work, feed the item models and answer the widgets'
calls. Widgets render models and turn gestures into controller calls; the composition root
(:mod:`inspector.app`) builds one :class:`~inspector.controllers.context.AppContext` holding them.
"""
