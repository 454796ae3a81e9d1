package dev.example.orders;

/**
 * Cuerpo de {@code POST /orders}, por ejemplo
 * {@code {"quantity":1,"customerReference":"  ORDER-1  "}}.
 */
public record CreateOrderRequest(int quantity, String customerReference) {
}
