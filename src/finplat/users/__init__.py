"""Users: the partner's customers, personal or business."""
